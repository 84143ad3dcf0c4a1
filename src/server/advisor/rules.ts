// In charge of the list of the advisor's rules, in the order they are documented
// (docs/operations.md, "Security advisor").
import type { Rule } from './finding.js';
import { unindexedForeignKey } from './rules/foreign-keys.js';
import { definerCallableByAnon, definerSearchPath } from './rules/functions.js';
import { mfaLockBypass } from './rules/mfa-lock.js';
import { authRlsInitplan, tenancyCheckPerRow } from './rules/per-row-calls.js';
import { rlsDisabled, rlsNotForced } from './rules/rls.js';
import { typesMissingTable, typesNotGenerated } from './rules/types.js';
import { materializedViewInApi, securityDefinerView } from './rules/views.js';

export const RULES: readonly Rule[] = [
  rlsDisabled,
  rlsNotForced,
  mfaLockBypass,
  definerSearchPath,
  definerCallableByAnon,
  securityDefinerView,
  materializedViewInApi,
  authRlsInitplan,
  tenancyCheckPerRow,
  unindexedForeignKey,
  typesNotGenerated,
  typesMissingTable,
];
