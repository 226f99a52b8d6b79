import { handoffContract } from './contract.js';
import { pgBoss } from './pg-boss-engine.js';

handoffContract(pgBoss, await pgBoss.available());
