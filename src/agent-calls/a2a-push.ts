import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * How the service asks an A2A agent to push a task's updates instead of waiting for its polls: at
 * the service's public URL, with a bearer token of that task alone. The token is an HMAC of the
 * task id under the service's SECRETS_KEY, so nothing is stored for it and the endpoint checks it
 * without a lookup beyond the task's.
 */
export interface A2aPushSettings {
  /** PUBLIC_URL: the service's base URL as agents reach it. */
  publicUrl: string;
  /** SECRETS_KEY first, then SECRETS_KEY_PREVIOUS: tokens are made with the first, and any of them opens one. */
  keys: Buffer[];
}

/** The push notification config of A2A 1.0's SendMessageConfiguration for one of the service's tasks. */
export interface A2aPushConfig {
  url: string;
  authentication: { scheme: 'Bearer'; credentials: string };
}

const tokenOf = (key: Buffer, taskId: string): string =>
  createHmac('sha256', key).update(`a2a-push\0${taskId}`).digest('base64url');

/** The config that names `POST /a2a-push/{taskId}` and the task's token. */
export function a2aPushConfig({ publicUrl, keys }: A2aPushSettings, taskId: string): A2aPushConfig {
  return {
    url: `${publicUrl.replace(/\/+$/, '')}/a2a-push/${encodeURIComponent(taskId)}`,
    authentication: { scheme: 'Bearer', credentials: tokenOf(keys[0], taskId) },
  };
}

/** Whether `token` is the task's, under any of the keys; compared in constant time. */
export function isA2aPushToken(keys: Buffer[], taskId: string, token: string): boolean {
  const given = Buffer.from(token);
  return keys.some((key) => {
    const expected = Buffer.from(tokenOf(key, taskId));
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
