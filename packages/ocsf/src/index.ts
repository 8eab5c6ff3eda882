/** Audit records as OCSF events (API Activity, schema 1.8.0) and the vendored schema to check them against. */
export { API_ACTIVITY_CLASS_UID, OCSF_PROFILES, type OcsfContext, type PresentedRecord, toApiActivity, toJsonLines } from './api-activity';
export { OCSF_VERSION, OcsfSchema, type JsonSchema } from './ocsf-schema';
