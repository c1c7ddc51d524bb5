import { prepareFixtures } from '../../src/localplane.ts';

/** Builds the fixture template once, before test files start instances in parallel. */
export default function setup() {
  prepareFixtures();
}
