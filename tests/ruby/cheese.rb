# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The Ruby tests' workload (tests/ruby.bats): prints "pid PID", then, until
# killed, by MODE:
#   chain   burns CPU in brie -> camembert -> Cave#reblochon, whose loop is
#           a block (Integer#times, a C method, between)
#   sleep   sleeps in comte -> beaufort (Kernel#sleep), 20 ms at a time
#   deep    burns CPU under 40 calls of Cave#down, from Cave.cellar
#   short   the chain for a fixed amount of work, then "done PID", and exits
#   threads the chain in 4 threads, "tid N" for each
class Cave
  def reblochon(n)
    x = 0
    n.times { |i| x += i * i % 7 }
    x
  end

  def down(depth)
    return down(depth - 1) if depth > 1
    reblochon(20000)
  end

  def self.cellar(depth)
    new.down(depth)
  end
end

def camembert(n)
  Cave.new.reblochon(n)
end

def brie(n)
  camembert(n)
end

def beaufort
  sleep 0.02
end

def comte
  beaufort
end

mode = ARGV[0] || 'chain'
$stdout.sync = true
puts "pid #{Process.pid}"
case mode
when 'chain'
  loop { brie(20000) }
when 'sleep'
  loop { comte }
when 'deep'
  loop { Cave.cellar(40) }
when 'short'
  3000.times { brie(20000) }
  puts "done #{Process.pid}"
when 'threads'
  t = (1..4).map { |k| Thread.new { puts "tid #{k}"; loop { brie(20000) } } }
  t.each(&:join)
end
