// The one module that imports inversify. ESM evaluates a module's imports in source order, so
// inversify (and the reflect-metadata polyfill it pulls in) loads between the two guards and
// leaves the host's Reflect as it was (reflect-shield.ts). Keep these three imports in order.
import './inversify-load-begin.ts';
import { Container } from 'inversify';
import './inversify-load-end.ts';

export { Container };
export { withContainerReflect } from './reflect-shield.ts';
