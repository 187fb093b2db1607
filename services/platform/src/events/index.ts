export * from './bus';
export * from './outbox';
export * from './processed-events';
export * from './backlog-news';
