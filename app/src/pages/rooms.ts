import { api, ApiFailure, failureText } from '../api';
import { el, fill, type Page } from '../dom';
import type { Room } from '../records';
import { appLink } from '../task-parts';

/** The rooms the caller may see: the public ones, and those that list the caller (people and agents). */
export function roomsPage(): Page {
  const list = el('ul', { class: 'rooms' });
  void (async () => {
    try {
      const [open, own] = await Promise.all([
        api<Room[]>('GET', '/rooms?limit=200'),
        // Admin and service keys take part in no room: 403.
        api<Room[]>('GET', '/user/rooms?limit=200').catch((error: unknown) => {
          if (error instanceof ApiFailure && error.status === 403) return [];
          throw error;
        }),
      ]);
      const rooms = new Map([...own, ...open].map((room) => [room.roomId, room]));
      fill(
        list,
        ...(rooms.size === 0
          ? ['No rooms.']
          : [...rooms.values()].map((room) =>
              el(
                'li',
                {},
                appLink(`rooms/${encodeURIComponent(room.roomId)}`, room.name),
                room.private ? ' (private) ' : ' ',
                el('span', { class: 'meta' }, room.description ?? ''),
              ),
            )),
      );
    } catch (error) {
      fill(list, el('li', { class: 'problem' }, failureText(error)));
    }
  })();
  return { view: el('section', {}, el('h1', {}, 'Rooms'), list) };
}
