// First of the three imports in inversify.ts: swaps in a private Reflect before inversify loads.
import { beginInversifyLoad } from './reflect-shield.ts';

beginInversifyLoad();
