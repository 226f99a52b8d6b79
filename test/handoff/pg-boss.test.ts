import { handoffContract } from './contract.js';
import { pgBoss } from './engines/pg-boss.js';

handoffContract(pgBoss, await pgBoss.available());
