export * from './bus';
export * from './outbox';
export * from './processed-events';
