import { z } from 'zod';

/**
 * Operational limits of the hosted service. They have changed over time there, so here
 * they are configuration (start options, and PATCH /_localplane/config at run time).
 */
export const limitsSchema = z.object({
  export_run_max_retries: z.int().min(0).default(20),
  export_run_retry_delay_seconds: z.number().min(0).default(30),
  export_run_time_limit_seconds: z.number().positive().default(4 * 3600),
  export_time_limit_seconds: z.number().positive().default(72 * 3600),
  /** Emulator-clock delay between a recurring window's end and the start of its child export. */
  recurring_start_delay_seconds: z.number().min(0).default(600),
  export_rows_per_file: z.int().min(1).default(5_000),
  export_row_group_size: z.int().min(1).default(2_500),
  multipart_part_size_bytes: z.int().min(5 * 1024 * 1024).default(8 * 1024 * 1024),
});
export type Limits = z.output<typeof limitsSchema>;

export const limitsPatch = limitsSchema.partial();
