/**
 * The one place the benchmarks load jobhook from: the built package in `dist/` (what users
 * install), typed by the sources. If the build layout changes, only this file changes. It reads
 * the snapshot of dist/ that run.ts copies next to the compiled bench scripts.
 */
import type * as Core from 'jobhook';
import type * as Express from 'jobhook/express';
import type * as Hono from 'jobhook/hono';
import type * as Node from 'jobhook/node';

const dist = (file: string) => new URL(`./dist/${file}`, import.meta.url).href;

const core = (await import(dist('index.js'))) as typeof Core;
const express = (await import(dist('express.js'))) as typeof Express;
const hono = (await import(dist('hono.js'))) as typeof Hono;
const node = (await import(dist('node.js'))) as typeof Node;

export const { createReceiver } = core;
export const { expressHandler } = express;
export const { honoHandler } = hono;
export const { nodeHandler } = node;
