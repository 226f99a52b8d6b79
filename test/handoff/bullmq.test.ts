import { handoffContract } from './contract.js';
import { bullmq } from './bullmq-engine.js';

handoffContract(bullmq, await bullmq.available());
