/**
 * A promise the test settles with `open()`: what waits on it goes on once the test saw what it
 * needed to see, whatever the time, so that the order of events, not their speed, decides a test.
 */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}
