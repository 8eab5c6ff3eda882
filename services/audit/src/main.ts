/** Composition root of the audit service: runs its definition (audit.service.ts; integration tests start the same definition in-process). */
import '@agw/shared/dist/tracing/register'; // first: traces (when configured) instrument what the imports below load
import { runService } from '@agw/shared';
import { auditService } from './audit.service';

runService(auditService());
