// Last of the three imports in inversify.ts: puts the host's Reflect back once inversify loaded.
import { endInversifyLoad } from './reflect-shield.ts';

endInversifyLoad();
