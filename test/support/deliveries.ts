// Moved to test/fixtures.ts; this path stays only so that branches written before the move still
// compile. Import test/fixtures.ts.
export * from '../fixtures.js';
