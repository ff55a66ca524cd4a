// Types of @tranquil/sdk as installed: those @tranquil/engine ships for its sdk entry.
export * from '@tranquil/engine/sdk';
