export * from './schema';
export * from './detect';
export * from './verdict';
export * from './render';
export * from './extract';
export * from './store';
export * from './record';
export * from './hook';
