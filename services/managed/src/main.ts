/** Composition root of the managed service: runs its definition (managed.service.ts; integration tests start the same definition in-process). */
import '@agw/shared/dist/tracing/register'; // first: traces (when configured) instrument what the imports below load
import { runService } from '@agw/shared';
import { managedService } from './managed.service';

runService(managedService());
