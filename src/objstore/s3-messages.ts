/** S3's own error messages: the embedded objstore answers them, and the destination check quotes them as a client sees them. */
export const ACCESS_DENIED_MESSAGE = 'Access denied.';
export const INVALID_ACCESS_KEY_ID_MESSAGE = 'The Key ID you provided does not exist in our records.';
