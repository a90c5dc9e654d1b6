export * from './contract';
export * from './state';
export * from './messages';
