// Preloaded with `node --require` into servers the tests start but do not write (such as
// @modelcontextprotocol/server-everything, which calls `app.listen(PORT)`): a TCP listen that names
// no host binds 127.0.0.1 instead of every interface, so that the tests stay on loopback. Each
// server that binds says where on stderr, so that the launcher can check it.
'use strict';
const net = require('node:net');

const LOOPBACK = '127.0.0.1';
const original = net.Server.prototype.listen;

/** A port as listen takes it: a number, or a string of digits (a path is any other string). */
const isPort = (value) => typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value));

net.Server.prototype.listen = function listen(...args) {
  const [first] = args;
  if (isPort(first) && typeof args[1] !== 'string') {
    args.splice(1, 0, LOOPBACK);
  } else if (first === undefined || typeof first === 'function') {
    args.unshift(0, LOOPBACK);
  } else if (
    typeof first === 'object' &&
    first !== null &&
    !('path' in first) &&
    !('handle' in first) &&
    !('fd' in first)
  ) {
    if (first.host === undefined) args[0] = { ...first, host: LOOPBACK };
  }
  this.once('listening', () => {
    const address = this.address();
    if (address && typeof address === 'object')
      process.stderr.write(`loopback-listen: bound ${address.address}:${address.port}\n`);
  });
  return original.apply(this, args);
};
