import { runFileConformance } from './files/suite.ts';

runFileConformance('sqlite');
