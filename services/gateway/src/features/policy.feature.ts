/** The tenant's policy (bundles, templates, replay, shadows, OPA bundle sources): what its routes use. */
import type { PolicyClient } from '../clients/grpc-clients';

export interface PolicyFeature {
  policy: PolicyClient;
}
