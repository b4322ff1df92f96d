import { el, fill, type Page } from './dom';
import { agentsPage } from './pages/agents';
import { compositionPage } from './pages/composition';
import { roomPage } from './pages/room';
import { roomsPage } from './pages/rooms';
import { signInPage } from './pages/sign-in';
import { taskPage } from './pages/task';
import { currentCredentials, signOut } from './session';
import { appLink } from './task-parts';

/** The pages by the first segment of the hash route (`#/rooms/{roomId}`), given the rest decoded. */
const PAGES: Record<string, (id: string) => Page> = {
  agents: () => agentsPage(),
  rooms: (id) => (id === '' ? roomsPage() : roomPage(id)),
  tasks: (id) => taskPage(id),
  compositions: (id) => compositionPage(id),
};

let current: Page | undefined;

/** Shows the page the hash names; the sign-in page while no one is signed in. */
function route(): void {
  current?.leave?.();
  const [name = 'agents', ...rest] = location.hash.replace(/^#\/?/, '').split('/');
  const id = decodeURIComponent(rest.join('/'));
  const signedIn = currentCredentials() !== undefined;
  current = signedIn ? (PAGES[name] ?? PAGES.agents)(id) : signInPage(() => route());
  fill(document.getElementById('bar')!, bar(signedIn));
  fill(document.getElementById('page')!, current.view);
}

function bar(signedIn: boolean): HTMLElement {
  return el(
    'nav',
    {},
    el('strong', {}, 'Agent coordination'),
    signedIn ? appLink('agents', 'Agents') : null,
    signedIn ? appLink('rooms', 'Rooms') : null,
    signedIn
      ? el(
          'button',
          {
            type: 'button',
            id: 'sign-out',
            onclick: () => {
              signOut();
              location.hash = '';
              route();
            },
          },
          'Sign out',
        )
      : null,
  );
}

window.addEventListener('hashchange', route);
route();
