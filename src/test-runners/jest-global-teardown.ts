export { globalTeardown as default } from './jest-global-setup.ts';
