import { api, failureText } from '../api';
import { el, type Page } from '../dom';
import { signIn, signOut, type Credentials } from '../session';

/**
 * Sign in with an API key (development, services, agents) or a person's two tokens from the
 * identity provider. The credentials are checked with one API call before they are kept.
 */
export function signInPage(then: () => void): Page {
  const problem = el('p', { class: 'problem', role: 'alert' });
  const tryCredentials = async (credentials: Credentials) => {
    signIn(credentials);
    try {
      await api('GET', '/agents?limit=1');
      then();
    } catch (error) {
      signOut();
      problem.textContent = failureText(error);
    }
  };
  const apiKey = el('input', { id: 'api-key', name: 'api-key', type: 'password', required: true, autocomplete: 'off' });
  const keyForm = el(
    'form',
    {
      id: 'sign-in-key',
      onsubmit: (event) => {
        event.preventDefault();
        void tryCredentials({ apiKey: apiKey.value.trim() });
      },
    },
    el('h2', {}, 'With an API key'),
    el('label', { for: 'api-key' }, 'API key'),
    apiKey,
    el('button', { type: 'submit' }, 'Sign in'),
  );
  const session = el('input', { id: 'session-token', type: 'password', required: true, autocomplete: 'off' });
  const identity = el('input', { id: 'identity-token', type: 'password', required: true, autocomplete: 'off' });
  const tokenForm = el(
    'form',
    {
      id: 'sign-in-tokens',
      onsubmit: (event) => {
        event.preventDefault();
        void tryCredentials({ sessionToken: session.value.trim(), identityToken: identity.value.trim() });
      },
    },
    el('h2', {}, 'As a person'),
    el('p', {}, "The identity provider's access token and identity token."),
    el('label', { for: 'session-token' }, 'Access (session) token'),
    session,
    el('label', { for: 'identity-token' }, 'Identity token'),
    identity,
    el('button', { type: 'submit' }, 'Sign in'),
  );
  return {
    view: el(
      'section',
      { class: 'sign-in' },
      el('h1', {}, 'Sign in'),
      el('p', {}, 'Kept in this tab only, until you sign out or close it.'),
      problem,
      el('div', { class: 'columns' }, keyForm, tokenForm),
    ),
  };
}
