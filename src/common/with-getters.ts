/**
 * `object` with read-only, enumerable properties whose values `getters` compute on each read,
 * defined after the object was made.
 *
 * Why not `{ method() {…}, get size() {…} }`: V8 (Node 20, 22 and 24 alike) makes an object
 * literal that holds an accessor a dictionary-mode object, so every property read through it, the
 * methods called on each delivery included, is a hash lookup instead of an inline-cached load.
 * The receiver's in-flight count, job results and in-memory dedupe store are such objects, read on
 * every delivery (bench/NOTES.md). An accessor defined on the object afterwards leaves it in fast
 * mode. test/receiver/fast-objects.test.ts checks the objects that need it.
 */
export function withGetters<T extends object, G extends Record<string, unknown>>(
  object: T,
  getters: { readonly [K in keyof G]: () => G[K] },
): T & { readonly [K in keyof G]: G[K] } {
  for (const name of Object.keys(getters) as (keyof G & string)[]) {
    Object.defineProperty(object, name, { get: getters[name], enumerable: true });
  }
  return object as T & { readonly [K in keyof G]: G[K] };
}
