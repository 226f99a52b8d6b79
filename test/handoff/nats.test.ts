import { handoffContract } from './contract.js';
import { nats } from './nats-engine.js';

handoffContract(nats, await nats.available());
