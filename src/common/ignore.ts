/** Does nothing: the handler for a settlement or a call that is deliberately not acted on. */
export function ignore(): void {}
