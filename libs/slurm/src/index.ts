export * from './quote';
export * from './errors';
export * from './executor';
export * from './ssh';
export * from './hostkeys';
export * from './commands';
export * from './parse';
export * from './cluster';
