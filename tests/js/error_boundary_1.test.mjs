// The error boundary, part 1 of 2 (tests/js/support/error_boundary_suite.mjs has the
// tests and says what they check; split in two so that two Vitest workers share them).
import { defineErrorBoundarySuite } from './support/error_boundary_suite.mjs';

defineErrorBoundarySuite(0, 2);
