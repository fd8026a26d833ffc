// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The workload of tests/node.bats: JavaScript the stack tools must name.
//
// usage: node cheese.js busy   -- main's thread burns CPU in brie -> camembert -> reblochon
//        node cheese.js nap    -- main's thread sleeps in doze -> napping, 20 ms at a time
//        node cheese.js class  -- busy, through a class's constructor and an arrow function
//        node cheese.js churn  -- busy through closures made anew each call, allocating
//                                 all the while: V8's collector moves them, and their code
//        node cheese.js worker -- a worker thread (its own isolate) busy, main's waiting
//        node cheese.js brief  -- busy for a second of CPU, then exits
//        node cheese.js many N -- busy through N functions of a script of their own,
//                                 many.js, fN on its line N + 1, each calling edam:
//                                 as many distinct compiled codes as the JIT makes
// Prints "pid PID" once running (the worker's "worker TID" too); runs until killed or
// its parent (the test) is gone.
'use strict';

const parent = process.ppid;
let sink = 0;

function reblochon(n) {
  let x = 0;
  for (let i = 0; i < n; i++) x += (i * i) % 7;
  return x;
}

function camembert(n) {
  return reblochon(n) + 1;
}

function brie(n) {
  return camembert(n) + 1;
}

const cell = new Int32Array(new SharedArrayBuffer(4));

function napping() {
  // A blocking wait of the main thread itself: off CPU under its callers.
  Atomics.wait(cell, 0, 0, 20);
}

function doze() {
  napping();
}

class Fondue {
  constructor(n) {
    const melt = (k) => brie(k);
    this.v = melt(n);
  }
}

// Each call a new closure, and garbage beside it: young objects the scavenger moves.
function churn(n) {
  const junk = [];
  for (let i = 0; i < 64; i++) junk.push({ i, s: 'x' + i, a: new Array(16).fill(i) });
  const gouda = (k) => brie(k) + junk.length;
  return gouda(n);
}

function orphaned() {
  return process.ppid !== parent;
}

function main(mode) {
  if (mode === 'worker') {
    const { Worker } = require('worker_threads');
    const w = new Worker(__filename, { argv: ['busy'] });
    w.on('message', (tid) => console.log('pid ' + process.pid + '\nworker ' + tid));
    return;
  }
  if (mode === 'many') {
    // One function a line, their names their lines: a frame named fI at
    // any line but I + 1 is misnamed.
    const n = Number(process.argv[3]);
    const src = ['function edam(n) { let x = 0; for (let i = 0; i < n; i++) x += (i * i) % 7; return x; }'];
    for (let i = 1; i <= n; i++) src.push(`function f${i}(k) { return edam(k) + ${i}; }`);
    src.push(`[${Array.from({ length: n }, (_, i) => `f${i + 1}`).join(', ')}]`);
    const fns = require('vm').runInThisContext(src.join('\n'), { filename: 'many.js' });
    console.log('pid ' + process.pid);
    while (!orphaned())
      for (const f of fns) sink += f(200);
    return;
  }
  if (mode === 'brief') {
    // A second of CPU, however long a loaded machine takes to give it.
    console.log('pid ' + process.pid);
    const from = process.cpuUsage().user;
    while (process.cpuUsage().user - from < 1e6) sink += brie(20000);
    return;
  }
  const { isMainThread, parentPort } = require('worker_threads');
  if (!isMainThread) {
    // The worker's own thread id, as the host sees it.
    const tid = require('fs').readlinkSync('/proc/thread-self').split('/').pop();
    parentPort.postMessage(tid);
  } else {
    console.log('pid ' + process.pid);
  }
  for (let round = 0; !orphaned(); round++) {
    const until = Date.now() + 200;
    while (Date.now() < until) {
      if (mode === 'nap') doze();
      else if (mode === 'class') sink += new Fondue(20000).v;
      else if (mode === 'churn') sink += churn(20000);
      else sink += brie(20000);
    }
  }
}

main(process.argv[2] || 'busy');
