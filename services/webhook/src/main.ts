/** Composition root of the webhook service: runs its definition (webhook.service.ts; integration tests start the same definition in-process). */
import '@agw/shared/dist/tracing/register'; // first: traces (when configured) instrument what the imports below load
import { runService } from '@agw/shared';
import { webhookService } from './webhook.service';

runService(webhookService());
