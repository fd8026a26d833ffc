// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The workload of tests/node.bats: JavaScript the stack tools must name.
//
// usage: node cheese.js busy   -- main's thread burns CPU in brie -> camembert -> reblochon
//        node cheese.js nap    -- main's thread sleeps in doze -> napping, 20 ms at a time
//        node cheese.js class  -- busy, through a class's constructor and an arrow function
// Prints "pid PID" once running; runs until killed or its parent (the test) is gone.
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

function orphaned() {
  return process.ppid !== parent;
}

function main(mode) {
  console.log('pid ' + process.pid);
  for (let round = 0; !orphaned(); round++) {
    const until = Date.now() + 200;
    while (Date.now() < until) {
      if (mode === 'nap') doze();
      else if (mode === 'class') sink += new Fondue(20000).v;
      else sink += brie(20000);
    }
  }
}

main(process.argv[2] || 'busy');
