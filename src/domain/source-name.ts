/**
 * A source name (registry and push; it becomes each article's `source`): 1-64 letters, digits, `.`, `_`, `-`, starting
 * with a letter or digit.
 */
export const SOURCE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
