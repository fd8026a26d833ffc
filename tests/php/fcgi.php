<?php
// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A FastCGI client of the least kind, for tests/php.bats's PHP-FPM test:
// asks the FPM listening on SOCKET to run SCRIPT with QUERY (a GET), says
// "sent", then prints what the response says until FPM ends it.
//
// usage: php fcgi.php SOCKET SCRIPT QUERY

function record($type, $content)
{
	// Version 1, request 1, no padding.
	return pack('CCnnCx', 1, $type, 1, strlen($content), 0) . $content;
}

function pair($name, $value)
{
	$len = function ($s) {
		return strlen($s) < 128 ? chr(strlen($s)) : pack('N', strlen($s) | 0x80000000);
	};
	return $len($name) . $len($value) . $name . $value;
}

[, $socket, $script, $query] = $argv;
$s = stream_socket_client("unix://$socket", $errno, $error, 10);
if (!$s) {
	fwrite(STDERR, "fcgi: $socket: $error\n");
	exit(1);
}
$params = pair('SCRIPT_FILENAME', $script) . pair('REQUEST_METHOD', 'GET') .
	pair('QUERY_STRING', $query) . pair('SERVER_PROTOCOL', 'HTTP/1.1');
// BEGIN_REQUEST as a responder, PARAMS and their end, an empty STDIN.
fwrite($s, record(1, pack('nCx5', 1, 0)) . record(4, $params) . record(4, '') . record(5, ''));
echo "sent\n";
while (!feof($s)) {
	$h = fread($s, 8);
	if (strlen($h) < 8)
		break;
	$r = unpack('Cversion/Ctype/nid/nlen/Cpad', $h);
	$body = $r['len'] + $r['pad'] ? fread($s, $r['len'] + $r['pad']) : '';
	if ($r['type'] == 6)
		echo substr($body, 0, $r['len']);
	if ($r['type'] == 3)
		break;
}
