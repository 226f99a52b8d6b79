import { handoffContract } from './contract.js';
import { nats } from './engines/nats.js';

handoffContract(nats, await nats.available());
