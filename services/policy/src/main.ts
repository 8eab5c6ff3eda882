/** Composition root of the policy service: runs its definition (policy.service.ts; integration tests start the same definition in-process). */
import '@agw/shared/dist/tracing/register'; // first: traces (when configured) instrument what the imports below load
import { runService } from '@agw/shared';
import { policyService } from './policy.service';

runService(policyService());
