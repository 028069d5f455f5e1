a \
 b