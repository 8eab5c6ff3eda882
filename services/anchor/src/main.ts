/** Composition root of the anchor service: runs its definition (anchor.service.ts; integration tests start the same definition in-process). */
import '@agw/shared/dist/tracing/register'; // first: traces (when configured) instrument what the imports below load
import { runService } from '@agw/shared';
import { anchorService } from './anchor.service';

runService(anchorService());
