export { exitCodeForStop, resultObject } from './run-output.js';
