import { z } from 'zod';
import { listPage, pageQuery, timestamp } from './schemas.ts';

/** The only compute type the service knows. */
export const LISTENER_COMPUTE_TYPES = ['k8s'] as const;

/** ListenerComputeConfig: every field nullable, checked against the compute type (see listeners.ts). */
export const listenerComputeConfig = z.object({ k8s_namespaces: z.array(z.string()).nullish() });
export type ListenerComputeConfig = z.output<typeof listenerComputeConfig>;

export const listenerCreate = z.object({
  version: z.string().nullish(),
  compute_type: z.enum(LISTENER_COMPUTE_TYPES),
  compute_id: z.string(),
  compute_config: listenerComputeConfig,
});
export type ListenerCreate = z.output<typeof listenerCreate>;

/** Null or absent leaves a field as it is; compute_type and compute_id never change. */
export const listenerPatch = z.object({
  version: z.string().nullish(),
  compute_config: listenerComputeConfig.nullish(),
});
export type ListenerPatch = z.output<typeof listenerPatch>;

export const listenersQuery = z.object(pageQuery);
export const listenerIdParams = z.object({ listener_id: z.guid() });

export const listenerResponseSchema = z.object({
  version: z.string().nullable(),
  compute_type: z.enum(LISTENER_COMPUTE_TYPES),
  compute_id: z.string(),
  compute_config: z.object({ k8s_namespaces: z.array(z.string()).nullable() }),
  id: z.guid(),
  created_at: timestamp,
  updated_at: timestamp,
});
export type ListenerResponse = z.infer<typeof listenerResponseSchema>;

export const listenersListSchema = listPage(listenerResponseSchema);
