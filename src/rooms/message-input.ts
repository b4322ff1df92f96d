import { ApiError, ErrorCode } from '../http/errors';
import { validator } from '../http/validate';
import { SEND_MESSAGE_SCHEMA, type SendMessage } from './schemas';

/**
 * Checks a message a participant sends, over HTTP or WebSocket alike: 400 when malformed or blank,
 * 413 when its content has more than `maxChars` characters.
 */
export function messageInput(maxChars: number): (value: unknown) => SendMessage {
  const validate = validator<SendMessage>(SEND_MESSAGE_SCHEMA, 'message');
  return (value) => {
    const message = validate(value);
    // Characters as a reader counts them (code points), not UTF-16 units.
    let chars = 0;
    for (const _ of message.content) {
      if (++chars > maxChars)
        throw new ApiError(ErrorCode.PAYLOAD_TOO_LARGE, `Message content exceeds ${maxChars} characters`);
    }
    return message;
  };
}
