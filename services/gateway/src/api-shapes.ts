/**
 * zod shapes of values the HTTP API writes, for the schemas of domain modules as well as of routes
 * (`openapi/schema.ts` re-exports them). Only zod here, so any module may import it without reaching
 * up into the HTTP layer.
 */
import { z } from 'zod';

/** An ISO 8601 timestamp as the API writes it. */
export const timestamp = () => z.string().meta({ description: 'ISO 8601 timestamp' });
