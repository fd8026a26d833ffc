#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The Perl tests' workload (tests/perl.bats): prints "pid PID", then, until
# killed, by MODE:
#   chain   burns CPU in brie -> camembert -> Cave::reblochon
#   sort    the same in a sort block's comparison (a context stack of its own)
#   sleep   sleeps in comte -> beaufort (select), 20 ms at a time
#   deep    burns CPU under 40 calls of Cave::down
#   short   the chain for a fixed amount of work, then "done PID", and exits
#   threads the chain in 4 threads (ithreads), "tid TID" for each
use strict;
use warnings;

package Cave;

sub reblochon {
	my ($n) = @_;
	my $x = 0;
	for my $i (1 .. $n) { $x += $i * $i % 7 }
	return $x;
}

sub down {
	my ($depth) = @_;
	return down($depth - 1) if $depth > 1;
	return reblochon(20000);
}

package main;

sub camembert {
	return Cave::reblochon($_[0]);
}

sub brie {
	return camembert($_[0]);
}

sub beaufort {
	select(undef, undef, undef, 0.02);
}

sub comte {
	beaufort();
}

my $mode = $ARGV[0] // 'chain';
$| = 1;
print "pid $$\n";
if ($mode eq 'chain') {
	brie(20000) while 1;
} elsif ($mode eq 'sort') {
	while (1) { my @s = sort { brie(2000); $a <=> $b } (1 .. 8) }
} elsif ($mode eq 'sleep') {
	comte() while 1;
} elsif ($mode eq 'deep') {
	Cave::down(40) while 1;
} elsif ($mode eq 'short') {
	brie(20000) for 1 .. 3000;
	print "done $$\n";
} elsif ($mode eq 'threads') {
	require threads;
	my @t = map { threads->create(sub { print "tid " . threads->self->tid . "\n"; brie(20000) while 1 }) } 1 .. 4;
	$_->join for @t;
}
