/** Composition root of the gateway: runs its definition (gateway.ts; integration tests start the same definition in-process). */
import '@agw/shared/dist/tracing/register'; // first: traces (when configured) instrument what the imports below load
import { runService } from '@agw/shared';
import { gatewayService } from './gateway';

runService(gatewayService());
