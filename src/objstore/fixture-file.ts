import { z } from 'zod';
import { isValidBucketName } from './server/target.ts';
import { OBJSTORE_PERMISSIONS } from './types.ts';

/** objstore.json: the buckets, which of them anyone may read, and the key pairs. */
export const objstoreFile = z
  .object({
    /** Each becomes a folder of the data dir's objstore: a name the storage can hold, never a path. */
    buckets: z
      .array(
        z
          .string()
          .min(3)
          .max(63)
          .refine(
            isValidBucketName,
            'a bucket name is letters, digits, dots, hyphens and underscores, starting with a letter or digit',
          ),
      )
      .min(1),
    /** Buckets anyone may read without signing; each is one of `buckets`. */
    public_buckets: z.array(z.string()).default([]),
    keys: z.array(
      z.object({
        access_key_id: z.string().min(1),
        secret_access_key: z.string().min(1),
        permissions: z.array(z.enum(OBJSTORE_PERMISSIONS)),
        description: z.string().optional(),
      }),
    ),
  })
  .superRefine((objstore, ctx) => {
    objstore.public_buckets.forEach((bucket, index) => {
      if (!objstore.buckets.includes(bucket)) {
        ctx.addIssue({
          code: 'custom',
          message: `public bucket ${bucket} is not one of buckets`,
          path: ['public_buckets', index],
        });
      }
    });
  });
export type ObjstoreFile = z.infer<typeof objstoreFile>;
