<?php
// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The PHP tests' workload (tests/php.bats): prints "pid PID", then, until
// killed, by MODE:
//   chain   burns CPU in brie -> camembert -> Cave::reblochon
//   map     the same through array_map and a closure (C between PHP frames)
//   sleep   sleeps in comte -> beaufort (usleep), 20 ms at a time
//   deep    burns CPU under 40 calls of Cave::down
//   short   the chain for a fixed amount of work, then "done PID", and exits

class Cave
{
	public static function reblochon($n)
	{
		$x = 0;
		for ($i = 0; $i < $n; $i++)
			$x += $i * $i % 7;
		return $x;
	}

	public function down($depth)
	{
		if ($depth > 1)
			return $this->down($depth - 1);
		return self::reblochon(100000);
	}
}

function camembert($n)
{
	return Cave::reblochon($n);
}

function brie($n)
{
	return camembert($n);
}

function beaufort()
{
	usleep(20000);
}

function comte()
{
	beaufort();
}

// Under PHP-FPM: ?mode=MODE&pidfile=FILE, the worker's pid written there.
$mode = $argv[1] ?? $_GET['mode'] ?? 'chain';
if (isset($_GET['pidfile']))
	file_put_contents($_GET['pidfile'], 'pid ' . getmypid() . "\n");
echo 'pid ' . getmypid() . "\n";
switch ($mode) {
case 'chain':
	for (;;)
		brie(100000);
case 'map':
	for (;;)
		array_map(function ($n) { return camembert($n); }, [100000]);
case 'sleep':
	for (;;)
		comte();
case 'deep':
	$cave = new Cave();
	for (;;)
		$cave->down(40);
case 'short':
	for ($i = 0; $i < 2000; $i++)
		brie(100000);
	echo 'done ' . getmypid() . "\n";
	break;
}
