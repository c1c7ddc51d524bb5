/** What an admin token may be: 8 to 256 printable ASCII characters, no spaces (one header value, one URL parameter). */
export const ADMIN_TOKEN_SHAPE = /^[\x21-\x7e]{8,256}$/;
export const ADMIN_TOKEN_RULE = 'must be 8 to 256 printable characters without spaces';
