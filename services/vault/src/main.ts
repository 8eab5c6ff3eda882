/** Composition root of the vault service: runs its definition (vault.service.ts; integration tests start the same definition in-process). */
import '@agw/shared/dist/tracing/register'; // first: traces (when configured) instrument what the imports below load
import { runService } from '@agw/shared';
import { vaultService } from './vault.service';

runService(vaultService());
