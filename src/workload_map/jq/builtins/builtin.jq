# Builtins of workload_map.jq that are written in jq.
#
# The compiler implements the ones that need closures or must not recurse (path, select, map,
# recurse, limit, first, last, nth, skip, isempty, any, all, while, until, repeat, sub,
# tostream, walk, env, debug, ...); the value natives (length, keys, to_entries, setpath,
# _match, ...) live in the group modules beside this file. Each definition here is registered by
# being here (registry.py reads the heads) and compiled the first time a program calls it.

# --- membership -------------------------------------------------------------------------------
def in(container): . as $key | container | has($key);
def inside(container): . as $part | container | contains($part);
def IN(source): any(source == .; .);
def IN(source; candidates): any(source == candidates; .);

# --- objects and entries ----------------------------------------------------------------------
def with_entries(f): to_entries | map(f) | from_entries;
def map_values(f): .[] |= f;

# --- aggregation ------------------------------------------------------------------------------
def add(f): [f] | add;
def min_by(f): _min_by(map([f]));
def max_by(f): _max_by(map([f]));
def sort_by(f): _sort_by(map([f]));
def group_by(f): _group_by(map([f]));
def unique_by(f): _unique_by(map([f]));
def INDEX(source; key): reduce source as $row ({}; .[$row | key | tostring] = $row);
def INDEX(key): INDEX(.[]; key);
def JOIN($table; key): [.[] | [., $table[key]]];
def JOIN($table; source; key): source | [., $table[key]];
def JOIN($table; source; key; combine): source | [., $table[key]] | combine;

# --- type filters -----------------------------------------------------------------------------
def nulls: select(type == "null");
def booleans: select(type == "boolean");
def numbers: select(type == "number");
def strings: select(type == "string");
def arrays: select(type == "array");
def objects: select(type == "object");
def iterables: select(type == "array" or type == "object");
def scalars: select(type != "array" and type != "object");
def values: select(type != "null");
def finites: select(isfinite);
def normals: select(isnormal);

# --- positions --------------------------------------------------------------------------------
def first: .[0];
def last: .[-1];
def nth($i): .[$i];
def range($upto): _range(0; $upto; 1);
def range($from; $upto): _range($from; $upto; 1);
def range($from; $upto; $by): _range($from; $upto; $by);

# --- structure --------------------------------------------------------------------------------
def combinations:
  if length == 0 then []
  else .[0][] as $head | [$head] + (.[1:] | combinations)
  end;
def combinations(n): . as $set | [limit(n; repeat($set))] | combinations;

# --- paths ------------------------------------------------------------------------------------
def paths: path(..) | select(length > 0);
def paths(node_filter): path(.. | select(node_filter)) | select(length > 0);
def del(f): delpaths([path(f)]);
def pick(f): . as $whole | reduce path(f) as $p (null; setpath($p; $whole | getpath($p)));
def fromstream(events):
  { done: false, v: null } as $fresh
  | foreach (events | _stream_event) as $e (
      $fresh;
      if .done then $fresh end
      | if ($e | length) == 2 then
          setpath(["v"] + $e[0]; $e[1]) | .done = (($e[0] | length) == 0)
        else
          .done = (($e[0] | length) == 1)
        end;
      if .done then .v else empty end
    );
def truncate_stream(events):
  . as $depth
  | null
  | events
  | if (.[0] | length) > $depth then .[0] |= .[$depth:] else empty end;

# --- dates ------------------------------------------------------------------------------------
def todateiso8601: strftime("%Y-%m-%dT%H:%M:%SZ");
def fromdateiso8601: strptime("%Y-%m-%dT%H:%M:%S%z") | mktime;
def todate: todateiso8601;
def fromdate: fromdateiso8601;

# --- regular expressions ----------------------------------------------------------------------
def match($re): match($re; null);
def match($re; $flags): _match($re; $flags; false)[];
def test($re): test($re; null);
def test($re; $flags): _match($re; $flags; true);
def capture($re): capture($re; null);
def capture($re; $flags): match($re; $flags) | _capture;
def scan($re): scan($re; null);
def scan($re; $flags):
  match($re; $flags + "g")
  | if (.captures | length) > 0 then [.captures[].string] else .string end;
def splits($re): splits($re; null);
def splits($re; $flags): split($re; $flags)[];
def sub($re; replacement): sub($re; replacement; "");
def gsub($re; replacement): sub($re; replacement; "g");
def gsub($re; replacement; $flags): sub($re; replacement; $flags + "g");
