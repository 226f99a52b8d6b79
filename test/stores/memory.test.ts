// The in-memory store against the shared contract.
import { it } from 'vitest';

// TODO(lead): once the lease-aware memoryDedupeStore lands on main, replace this line with
//   storeContract({ make: (times) => memoryDedupeStore(times) })   (from './contract.js')
// and a `pass` that advances the store's `now` option, if it keeps one.
it.todo('memoryDedupeStore meets the DedupeStore contract (waits for its lease version)');
